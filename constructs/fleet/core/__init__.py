"""The fleet's core: the construct tree, the Fleet, configuration, values and errors."""
