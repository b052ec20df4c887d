CREATE TABLE "video_videos" (
	"id" text PRIMARY KEY NOT NULL,
	"channel_id" text NOT NULL,
	"channel" text NOT NULL,
	"title" text NOT NULL,
	"description" text NOT NULL,
	"url" text NOT NULL,
	"thumbnail" text,
	"published" bigint NOT NULL,
	"views" bigint,
	"seen" bigint NOT NULL
);

--> statement-breakpoint
CREATE INDEX "video_videos_published" ON "video_videos" USING btree ("published");
--> statement-breakpoint
CREATE INDEX "video_videos_channel" ON "video_videos" USING btree ("channel_id","published");
