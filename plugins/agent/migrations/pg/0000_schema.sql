CREATE TABLE "agent_agents" (
	"owner" text NOT NULL,
	"name" text NOT NULL,
	"instruction" text NOT NULL,
	"created" bigint NOT NULL,
	"updated" bigint NOT NULL,
	CONSTRAINT "agent_agents_owner_name_pk" PRIMARY KEY("owner","name")
);

