DROP TABLE IF EXISTS user_tool_configs;
DROP TABLE IF EXISTS tool_files;
