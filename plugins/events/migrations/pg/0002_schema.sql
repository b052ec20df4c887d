CREATE INDEX "events_owner_end" ON "events_events" USING btree ("owner",("start" + "minutes" * 60000));
--> statement-breakpoint
CREATE INDEX "events_repeating" ON "events_events" USING btree ("owner") WHERE ("events_events"."repeat" IS NOT NULL OR "events_events"."rule" IS NOT NULL);
