-- The time index goes: the retention sweep goes by id (core/audit/log.ts),
-- and every entry written paid for it. The newest entry is never deleted, as
-- on SQLite (core/audit/migrations/0001_no_time_index.sql), where it is what
-- the next id counts from; the identity column here never gives an id twice
-- anyway, and the sweep is the same on both.
DROP INDEX "audit_log_at";
--> statement-breakpoint
CREATE FUNCTION audit_log_keep_newest() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF OLD.id >= (SELECT max(id) FROM audit_log) THEN
		RAISE EXCEPTION 'audit_log is append-only: its newest entry is never removed';
	END IF;
	RETURN OLD;
END
$$;
--> statement-breakpoint
CREATE TRIGGER audit_log_keep_newest BEFORE DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_keep_newest();
