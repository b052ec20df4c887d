CREATE TABLE "tiles_held" (
	"style" text NOT NULL,
	"z" bigint NOT NULL,
	"x" bigint NOT NULL,
	"y" bigint NOT NULL,
	"hash" text NOT NULL,
	"size" bigint NOT NULL,
	"fetched" bigint NOT NULL,
	CONSTRAINT "tiles_held_style_z_x_y_pk" PRIMARY KEY("style","z","x","y")
);

--> statement-breakpoint
CREATE INDEX "tiles_held_hash" ON "tiles_held" USING btree ("hash");
