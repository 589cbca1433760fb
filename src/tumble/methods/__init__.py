"""The advance methods, one per world (step.method_for): time-stepping, the ODE integrators, the implicit
spring integrators and the event-driven method (docs/architecture.md)."""
