"""Built-in RSP engines (plug-ins behind the engine interface of the core)."""
