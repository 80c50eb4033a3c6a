DROP TABLE IF EXISTS evaluation_items;
DROP TABLE IF EXISTS evaluation_runs;
DROP TABLE IF EXISTS throughput_runs;
