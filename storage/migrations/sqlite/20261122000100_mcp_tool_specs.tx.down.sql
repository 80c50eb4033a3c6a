DROP TABLE IF EXISTS mcp_tool_specs;
