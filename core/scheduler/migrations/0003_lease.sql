ALTER TABLE `schedule_firings` ADD `owner` text;--> statement-breakpoint
ALTER TABLE `schedule_firings` ADD `lease` integer;--> statement-breakpoint
CREATE INDEX `schedule_firings_lease` ON `schedule_firings` (`lease`);