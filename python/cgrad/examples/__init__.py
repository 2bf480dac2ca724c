"""Runnable examples: `python -m cgrad.examples.fashion_mnist` is the main job."""
