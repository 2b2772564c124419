"""What people see: the console, log lines, plans, status, lists, studies, a followed job."""
