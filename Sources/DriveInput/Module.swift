// DriveInput module: see README architecture.
