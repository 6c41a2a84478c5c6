"""NeuroAdapter (Feng et al., ICLR 2026): brain tokens condition a frozen diffusion model through decoupled
cross-attention, and the attention probabilities give the IBBI views of which brain regions shape which pixels.

Explained in chapters/neuroadapter/01_theory.md and chapters/neuroadapter/02_experiments.md.
"""
