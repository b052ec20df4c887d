-- Custom SQL migration file, put your code below! ---- Money is never changed in place: a correction is a new entry.
CREATE TRIGGER `pay_ledger_no_update` BEFORE UPDATE ON `pay_ledger` BEGIN SELECT RAISE(ABORT, 'pay_ledger is append-only'); END;
--> statement-breakpoint
CREATE TRIGGER `pay_ledger_no_delete` BEFORE DELETE ON `pay_ledger` BEGIN SELECT RAISE(ABORT, 'pay_ledger is append-only'); END;
--> statement-breakpoint
CREATE TRIGGER `pay_x402_no_update` BEFORE UPDATE ON `pay_x402` BEGIN SELECT RAISE(ABORT, 'pay_x402 is append-only'); END;
--> statement-breakpoint
CREATE TRIGGER `pay_x402_no_delete` BEFORE DELETE ON `pay_x402` BEGIN SELECT RAISE(ABORT, 'pay_x402 is append-only'); END;
