-- Money is never changed in place: a correction is a new entry. Written by
-- hand, as SQLite's triggers are (core/pay/migrations/0001_append_only.sql),
-- with the same message.
CREATE FUNCTION pay_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END
$$;
--> statement-breakpoint
CREATE TRIGGER pay_ledger_no_update BEFORE UPDATE ON pay_ledger FOR EACH ROW EXECUTE FUNCTION pay_append_only();
--> statement-breakpoint
CREATE TRIGGER pay_ledger_no_delete BEFORE DELETE ON pay_ledger FOR EACH ROW EXECUTE FUNCTION pay_append_only();
--> statement-breakpoint
CREATE TRIGGER pay_x402_no_update BEFORE UPDATE ON pay_x402 FOR EACH ROW EXECUTE FUNCTION pay_append_only();
--> statement-breakpoint
CREATE TRIGGER pay_x402_no_delete BEFORE DELETE ON pay_x402 FOR EACH ROW EXECUTE FUNCTION pay_append_only();
