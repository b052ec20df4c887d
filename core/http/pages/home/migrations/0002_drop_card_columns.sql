ALTER TABLE `home_prefs` DROP COLUMN `prayer`;--> statement-breakpoint
ALTER TABLE `home_prefs` DROP COLUMN `prayer_method`;