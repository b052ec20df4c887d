ALTER TABLE "events_events" ADD COLUMN "rule" text;
