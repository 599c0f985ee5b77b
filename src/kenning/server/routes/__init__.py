"""The REST routes, one module per area; each route validates, calls the engine
(or its directory) with the caller's principal, and shapes the answer."""
