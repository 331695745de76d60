import CarbridgeCommands

// `carbridge`: every command; a run with the dashboard on becomes `carbridge-dashboard` (DashboardBuild).
Carbridge.main()
