CREATE TABLE "apps" (
	"id" text PRIMARY KEY NOT NULL,
	"slug" text NOT NULL,
	"owner" text,
	"owner_name" text NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"tags" text DEFAULT '' NOT NULL,
	"icon" text DEFAULT '' NOT NULL,
	"html" text NOT NULL,
	"price" bigint DEFAULT 0 NOT NULL,
	"forked_from" text,
	"starter" bigint DEFAULT 0 NOT NULL,
	"created" bigint NOT NULL,
	"updated" bigint NOT NULL,
	CONSTRAINT "apps_slug_unique" UNIQUE("slug")
);

--> statement-breakpoint
CREATE TABLE "apps_grants" (
	"app" text NOT NULL,
	"account" text NOT NULL,
	"method" text NOT NULL,
	"at" bigint NOT NULL,
	CONSTRAINT "apps_grants_app_account_method_pk" PRIMARY KEY("app","account","method")
);

--> statement-breakpoint
CREATE TABLE "apps_opens" (
	"ticket" text PRIMARY KEY NOT NULL,
	"app" text NOT NULL,
	"account" text NOT NULL,
	"price" bigint NOT NULL,
	"at" bigint NOT NULL,
	"expires" bigint NOT NULL
);

--> statement-breakpoint
CREATE TABLE "apps_snippets" (
	"id" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"code" text NOT NULL,
	"created" bigint NOT NULL
);

--> statement-breakpoint
CREATE TABLE "apps_store" (
	"app" text NOT NULL,
	"account" text NOT NULL,
	"key" text NOT NULL,
	"value" text NOT NULL,
	"updated" bigint NOT NULL,
	CONSTRAINT "apps_store_app_account_key_pk" PRIMARY KEY("app","account","key")
);

--> statement-breakpoint
CREATE INDEX "apps_owner" ON "apps" USING btree ("owner");
--> statement-breakpoint
CREATE INDEX "apps_opens_account" ON "apps_opens" USING btree ("account","app");
