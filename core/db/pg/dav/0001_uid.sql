-- A PUT asks whether another resource holds its UID: one lookup, whatever the collection's size.
CREATE INDEX "dav_items_uid" ON "dav_items" ("account", "collection", "uid");
