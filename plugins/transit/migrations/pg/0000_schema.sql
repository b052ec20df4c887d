CREATE TABLE "transit_calendar" (
	"feed" text NOT NULL,
	"service" text NOT NULL,
	"days" text NOT NULL,
	"start" text NOT NULL,
	"end" text NOT NULL,
	CONSTRAINT "transit_calendar_feed_service_pk" PRIMARY KEY("feed","service")
);

--> statement-breakpoint
CREATE TABLE "transit_dates" (
	"feed" text NOT NULL,
	"service" text NOT NULL,
	"date" text NOT NULL,
	"type" bigint NOT NULL
);

--> statement-breakpoint
CREATE TABLE "transit_feeds" (
	"id" text PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"name" text,
	"timezone" text,
	"size" bigint,
	"hash" text,
	"etag" text,
	"last_modified" text,
	"state" text NOT NULL,
	"error" text,
	"checked" bigint,
	"imported" bigint,
	"start_date" text,
	"end_date" text,
	"stops" bigint,
	"trips" bigint
);

--> statement-breakpoint
CREATE TABLE "transit_routes" (
	"feed" text NOT NULL,
	"id" text NOT NULL,
	"short_name" text,
	"long_name" text,
	"type" bigint,
	CONSTRAINT "transit_routes_feed_id_pk" PRIMARY KEY("feed","id")
);

--> statement-breakpoint
CREATE TABLE "transit_sizes" (
	"url" text PRIMARY KEY NOT NULL,
	"size" bigint,
	"checked" bigint NOT NULL
);

--> statement-breakpoint
CREATE TABLE "transit_stops" (
	"feed" text NOT NULL,
	"id" text NOT NULL,
	"code" text,
	"name" text NOT NULL,
	"lat" double precision,
	"lon" double precision,
	"parent" text,
	"kind" bigint NOT NULL,
	CONSTRAINT "transit_stops_feed_id_pk" PRIMARY KEY("feed","id")
);

--> statement-breakpoint
CREATE TABLE "transit_times" (
	"feed" text NOT NULL,
	"trip" text NOT NULL,
	"stop" text NOT NULL,
	"seq" bigint NOT NULL,
	"arrival" bigint,
	"departure" bigint,
	"headsign" text
);

--> statement-breakpoint
CREATE TABLE "transit_trips" (
	"feed" text NOT NULL,
	"id" text NOT NULL,
	"route" text NOT NULL,
	"service" text NOT NULL,
	"headsign" text,
	CONSTRAINT "transit_trips_feed_id_pk" PRIMARY KEY("feed","id")
);

--> statement-breakpoint
CREATE INDEX "transit_dates_date" ON "transit_dates" USING btree ("feed","date");
--> statement-breakpoint
CREATE INDEX "transit_stops_lat" ON "transit_stops" USING btree ("lat");
--> statement-breakpoint
CREATE INDEX "transit_stops_name" ON "transit_stops" USING btree ("name");
--> statement-breakpoint
CREATE INDEX "transit_stops_parent" ON "transit_stops" USING btree ("feed","parent");
--> statement-breakpoint
CREATE INDEX "transit_times_stop" ON "transit_times" USING btree ("feed","stop","departure");
