UPDATE runs SET state = 'waiting_input' WHERE state = 'waiting_approval';
