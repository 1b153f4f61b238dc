"""The fleet's declarations: every module here is discovered by ``fleet synth``."""
