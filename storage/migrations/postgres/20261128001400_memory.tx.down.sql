DROP TABLE IF EXISTS memory_tasks;
DROP TABLE IF EXISTS memory_records;
DROP TABLE IF EXISTS memory_settings;
