"""A stereo call's voices: each channel's speech embedded on that channel alone (real
voices, the real ONNX embedder), so a party named on a call is known on a mono record."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.known_voices import conversation, real_clips, voice_of, word_segments
from tests.helpers.speaker_audio import write_wav
from tests.helpers.stereo_audio import stereo_call
from transcriber.domain.voices import SpokenLine, merge, similarity, speaker_prints
from transcriber.ports import Utterance
from transcriber.providers.speakers.separator import LocalSpeakerSeparator
from transcriber.settings import SpeakersSettings

THRESHOLD = SpeakersSettings().suggestion_threshold


async def test_each_channel_is_embedded_alone_and_known_on_a_mono_record(
        tmp_path: Path) -> None:
    path = tmp_path / "call.wav"
    turns = stereo_call(path, seconds=20.0)
    assert turns is not None
    # The call's utterances as the poll step has them: channel 0 is S1 (LV), 1 is S2 (CD).
    utterances = [Utterance(start_ms=t.start_ms, end_ms=t.end_ms, text="x",
                            channel=0 if t.speaker == "A" else 1,
                            speaker="S1" if t.speaker == "A" else "S2") for t in turns]
    separator = LocalSpeakerSeparator()
    windows = await separator.channel_voices(path, utterances)
    assert set(windows.channels.tolist()) == {0, 1}
    prints = speaker_prints(windows, [SpokenLine(speaker=str(u.speaker), channel=u.channel,
                                                 start_ms=u.start_ms, end_ms=u.end_ms)
                                      for u in utterances])
    assert set(prints) == {"S1", "S2"}
    assert similarity(prints["S1"], merge([prints["S2"]])) < THRESHOLD

    # The channels named on the call: a mono record of the same two voices, from other
    # clips, is matched speaker by speaker.
    clips = real_clips()
    audio, reference = conversation([("LV", clips["LV"][0]), ("CD", clips["CD"][0]),
                                     ("LV", clips["LV"][3]), ("CD", clips["CD"][3])])
    mono = write_wav(audio, tmp_path / "mono.wav")
    separated = await separator.separate(mono, word_segments(reference), num_speakers=2)
    assert separated.voices is not None
    voices = voice_of(separated.utterances, reference)
    lines = [SpokenLine(speaker=str(u.speaker), channel=0, start_ms=u.start_ms,
                        end_ms=u.end_ms) for u in separated.utterances]
    found = speaker_prints(separated.voices, lines)
    profiles = {"LV": merge([prints["S1"]]), "CD": merge([prints["S2"]])}
    for label, voice in voices.items():
        scores = {name: similarity(found[label], profile) for name, profile in profiles.items()}
        assert max(scores, key=lambda name: scores[name]) == voice
        assert scores[voice] >= THRESHOLD, (label, voice, scores)
