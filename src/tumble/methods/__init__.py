"""Dynamics: forces, integrators and the state vector of Baraff I."""
