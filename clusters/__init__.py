"""The fleet's declarations: every module here is discovered by ``fleet synth``.

fleet-example: the tool's example fleet. Its one source is the tool's fixture fleet,
tests/fixtures/fleets/hybrid/clusters; ``make example`` copies it here, and a test keeps the
two equal while this line is here. Replacing the example with your own clusters drops it.
"""
