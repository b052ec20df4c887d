ALTER TABLE `approvals` ADD `args_hash` text;--> statement-breakpoint
ALTER TABLE `approvals` ADD `used` integer;