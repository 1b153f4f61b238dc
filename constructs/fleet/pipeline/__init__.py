"""From declarations to dist/: discovery, synth, YAML, cache and writer."""
