ALTER TABLE `home_prefs` ADD `cards` text DEFAULT '{}' NOT NULL;
--> statement-breakpoint
UPDATE `home_prefs` SET `cards` = json_object('prayer', json_object('on', json(CASE WHEN `prayer` = 1 THEN 'true' ELSE 'false' END), 'choice', `prayer_method`)) WHERE `prayer` = 1 OR `prayer_method` IS NOT NULL;
