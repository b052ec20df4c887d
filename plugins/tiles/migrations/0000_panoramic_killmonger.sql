CREATE TABLE `tiles_held` (
	`style` text NOT NULL,
	`z` integer NOT NULL,
	`x` integer NOT NULL,
	`y` integer NOT NULL,
	`hash` text NOT NULL,
	`size` integer NOT NULL,
	`fetched` integer NOT NULL,
	PRIMARY KEY(`style`, `z`, `x`, `y`)
);
