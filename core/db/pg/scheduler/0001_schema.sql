ALTER TABLE "schedule_jobs" ADD COLUMN "rule" text;
