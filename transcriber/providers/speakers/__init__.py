"""The speaker engine: who spoke when in a recording, found on this machine's CPU.

What the rest of the service may use is named here; everything else is the
engine's own. Inside, by what each module does: `features` (log-mel front end),
`vad` (the one VAD of the service), `stream` (regions and features block by
block), `embedder` (the d-vector ONNX model), `clustering` and `refine`
(windows grouped by voice, embedded sparsely), `turns` (windows into speaker
turns), `words` (each recognized word takes the speaker it overlaps most),
`ahead` (turns found beside the recognition, at the lowest CPU priority),
`separator` (the adapter of `ports.SpeakerSeparator`) and `channels` (whether a
stereo original's two channels carry two speakers).

Imports: the rest of `providers` and the floors below it.
"""

from __future__ import annotations

from transcriber.providers.speakers.channels import (
    ChannelMeter,
    ChannelReport,
    ChannelVerdict,
    kept_channels,
)
from transcriber.providers.speakers.embedder import SpeakerModelUnavailable
from transcriber.providers.speakers.separator import LocalSpeakerSeparator
from transcriber.providers.speakers.vad import speech_regions

__all__ = [
    "ChannelMeter",
    "ChannelReport",
    "ChannelVerdict",
    "LocalSpeakerSeparator",
    "SpeakerModelUnavailable",
    "kept_channels",
    "speech_regions",
]
