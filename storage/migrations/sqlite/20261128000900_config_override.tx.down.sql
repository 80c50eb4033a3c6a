DROP TABLE config_override;
