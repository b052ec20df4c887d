CREATE TABLE `agent_agents` (
	`owner` text NOT NULL,
	`name` text NOT NULL,
	`instruction` text NOT NULL,
	`created` integer NOT NULL,
	`updated` integer NOT NULL,
	PRIMARY KEY(`owner`, `name`)
);
