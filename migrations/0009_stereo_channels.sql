-- Stereo calls (issue 13, item 1; docs/recognition.md, "Stereo calls").
--
-- files.channels: how many channels a file carries. The normalize step keeps
-- both channels of an original whose channels really differ (one speaker on
-- each) and writes 2 on the normalized copy's row; every other file, and
-- every file from before this migration, is 1 (a mono copy).
ALTER TABLE files ADD COLUMN channels INTEGER NOT NULL DEFAULT 1 CHECK (channels IN (1, 2));

-- recognitions.channel: the channel of the normalized copy a part recognizes,
-- when the local recognizer works on each channel of a stereo copy on its
-- own; NULL when the part carries every channel of the copy (a mono copy, or
-- a stereo one SpeechKit answers per channelTag).
ALTER TABLE recognitions ADD COLUMN channel INTEGER CHECK (channel IN (0, 1));
