// DriveRuntime module: see README architecture.
