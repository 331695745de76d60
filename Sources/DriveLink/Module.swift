// DriveLink module: see README architecture.
