-- Topics no record carries any more are removed (docs/operations.md, "Hostile
-- input": the topics table no longer grows with every name ever typed).
--
-- One trigger, whichever way the last record drops a topic: an edit of its
-- topics or its deletion. Whether another record still carries the topic is
-- one probe of idx_record_topics_topic (topic_id, record_id).
CREATE TRIGGER record_topics_drop_unused AFTER DELETE ON record_topics
WHEN NOT EXISTS (SELECT 1 FROM record_topics WHERE topic_id = OLD.topic_id)
BEGIN
    DELETE FROM topics WHERE id = OLD.topic_id;
END;

-- The ones left behind before this trigger (once, at the migration).
DELETE FROM topics
WHERE NOT EXISTS (SELECT 1 FROM record_topics AS rt WHERE rt.topic_id = topics.id);
