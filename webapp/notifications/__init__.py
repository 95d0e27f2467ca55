"""Push notifications to the phones of a job's owner (FCM and APNs). Not to be confused with the
signed-in devices of webapp/accounts/devices.py: a push device is an app install's push token,
a signed-in device is a chain of access and refresh tokens."""
