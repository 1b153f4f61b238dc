"""Python source generated from input: laid out as a person writes it, and checked on its
syntax tree before anything writes or runs it (input text enters it only through
:mod:`fleet.core.pysource`)."""
