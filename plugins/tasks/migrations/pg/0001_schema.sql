DROP INDEX "tasks_open_first";
--> statement-breakpoint
CREATE INDEX "tasks_open_first" ON "tasks" USING btree ("owner",("status" = 'done'),(CASE WHEN "status" = 'done' THEN -"done" WHEN "due" IS NULL THEN 9e15 ELSE "due" END),"created","id");
