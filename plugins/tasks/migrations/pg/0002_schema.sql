DROP INDEX "tasks_owner_status";
--> statement-breakpoint
CREATE INDEX "tasks_agent_next" ON "tasks" USING btree ("owner",(CASE WHEN "due" IS NULL THEN 9e15 ELSE "due" END),"created") WHERE "tasks"."assignee" = 'agent' AND "tasks"."status" != 'done';
--> statement-breakpoint
CREATE INDEX "tasks_owner_status" ON "tasks" USING btree ("owner","status",(CASE WHEN "status" = 'done' THEN -"done" WHEN "due" IS NULL THEN 9e15 ELSE "due" END),"created","id");
