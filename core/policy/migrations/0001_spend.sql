CREATE TABLE `credential_spend` (
	`credential` text NOT NULL,
	`day` text NOT NULL,
	`spent` integer NOT NULL,
	PRIMARY KEY(`credential`, `day`)
);
