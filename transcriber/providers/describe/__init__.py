"""The describers' adapters (`ports.Describer`) and what only they use:
`extractive` (offline: a title, a brief and topics from the transcript itself),
`topics` (the topics both describers share), `openai` (an OpenAI-compatible
model) and `stopwords` (the stop words and fillers the extractive describer
leaves out). Imports: the providers' floors (core, domain, settings, ports).
"""
