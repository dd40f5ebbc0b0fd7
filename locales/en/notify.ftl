# English: notifications (portal inbox, settings, webhooks) and notification e-mail
nav-notifications = Notifications
notifications-bell = Notifications, { $count } unread
notifications-title = Notifications
notifications-empty = No notifications yet.
notifications-mark-read = Mark as read
notifications-mark-all-read = Mark all as read
notifications-all-read = All notifications are marked as read.
notifications-open = Open
notifications-unread = Unread
notifications-patient = Patient
notifications-taken = Measured
notifications-earlier = Earlier
notifications-settings = Notification settings
notifications-settings-intro = Choose what reaches you, and where.
notifications-event = Event
notifications-channel-inbox = Portal
notifications-channel-email = E-mail
notifications-digest = Send one e-mail a day with everything new, instead of one e-mail per event
notifications-attach = Attach the PDF to e-mails about a new report (the attachment leaves the portal's protection)
notifications-save = Save
notifications-saved = Your notification settings are saved.
notifications-email-off = E-mail is not set up on this service; only the portal inbox is used.
event-measurement-analysed = New measurement result
event-measurement-report-ready = Measurement report ready
event-periodic-report-created = New periodic report
event-measurement-reviewed = Measurement reviewed by your physician
event-measurement-reviewed-staff = Measurement reviewed by a colleague
event-result-urgent = Urgent result to review
event-webhook-disabled = Webhook endpoint disabled
admin-notifications-title = Notifications
admin-group-events = Events sent to this team's physicians
admin-group-events-saved = The team's notification choices are saved.
admin-webhooks-title = Webhooks
admin-webhook-new = New webhook endpoint
admin-webhook-url = Address (https://)
admin-webhook-group = Care team
admin-webhook-events = Events
admin-webhook-create = Register
admin-webhook-created = The endpoint is registered. Copy its signing secret now: it is shown only this once.
admin-webhook-secret = Signing secret
webhook-url-too-long = The address is too long: at most 2,000 characters.
webhook-url-not-url = This is not a web address. Write it whole, starting with https://
webhook-url-credentials = The address must not contain a user name or password.
webhook-url-fragment = The address must not end in a part after #.
webhook-url-no-host = The address does not name a server.
webhook-url-not-https = The address must start with https://
webhook-url-this-machine = The address leads to this server itself.
webhook-url-reserved = The address leads to a reserved network address, which cannot receive webhooks.
webhook-url-private = The address leads to a private network, which this server does not send to.
admin-webhook-no-events = Choose at least one event.
admin-webhook-enabled = Active
admin-webhook-disabled = Disabled
admin-webhook-enable = Enable
admin-webhook-disable = Disable
admin-webhook-delete = Delete
admin-webhook-deleted = The endpoint is deleted.
admin-webhook-log = Deliveries
admin-webhook-none = No webhook endpoints yet.
admin-delivery-time = Time
admin-delivery-event = Event
admin-delivery-attempt = Attempt
admin-delivery-outcome = Outcome
admin-delivery-status = Response
admin-delivery-latency = Latency (ms)
admin-delivery-delivered = Delivered
admin-delivery-failed = Failed
admin-failed-deliveries = Deliveries that gave up
mail-greeting = Hello { $name },
mail-subject-measurement-analysed = Tacho: a new measurement result is ready
mail-subject-measurement-report-ready = Tacho: a new report is ready
mail-subject-periodic-report-created = Tacho: a new report is ready
mail-subject-measurement-reviewed = Tacho: a measurement was reviewed
mail-subject-result-urgent = Tacho: a measurement needs your review
mail-subject-webhook-disabled = Tacho: a webhook endpoint was disabled
mail-body-measurement-analysed = A new measurement result is ready for you in Tacho.
mail-body-measurement-report-ready = A new report is ready for you in Tacho.
mail-body-periodic-report-created = A new report is ready for you in Tacho.
mail-body-measurement-reviewed = Your physician has reviewed a measurement. The review is ready for you in Tacho.
mail-body-measurement-reviewed-staff = A colleague has reviewed a measurement of a patient of your care team. The review is in Tacho.
mail-body-result-urgent = A measurement of one of your patients needs your review soon.
mail-body-webhook-disabled = A webhook endpoint stopped receiving events after its deliveries kept failing, and was disabled.
mail-digest-subject = Tacho: { $count } updates are ready
mail-digest-intro = There are { $count } updates for you in Tacho:
mail-open = Open Tacho
mail-screening = Tacho screens heart rhythm; it does not diagnose. Talk to your physician about any result.
mail-settings = Change which messages you receive
mail-subject-password-reset = Tacho: set a new password
mail-body-password-reset = Someone asked to set a new password for your Tacho account. The link below works once, for { $hours ->
    [one] one hour
   *[other] { $hours } hours
}.
mail-action-password-reset = Set a new password
mail-subject-admin-reset = Tacho: your password was reset
mail-body-admin-reset = An administrator reset the password of your Tacho account. Set a new one with the link below; it works once, for { $hours ->
    [one] one hour
   *[other] { $hours } hours
}.
mail-action-admin-reset = Set a new password
mail-subject-email-change = Tacho: confirm your new e-mail address
mail-body-email-change = Someone asked to use this address for a Tacho account. The link below confirms it; it works once, for { $hours ->
    [one] one hour
   *[other] { $hours } hours
}.
mail-action-email-change = Confirm this address
mail-not-you = If you did not ask for this, ignore this e-mail: nothing changes.
mail-ask-admin = If you did not expect this, contact your clinic.
mail-subject-email-change-notice = Tacho: your e-mail address is being changed
mail-body-email-change-notice = Someone signed in to your Tacho account asked to change its e-mail address. If it was not you, stop the change with the link below (it works for { $hours ->
    [one] one hour
   *[other] { $hours } hours
}), then set a new password.
mail-action-email-change-notice = Stop the change
mail-new-address = The new address would be { $address }.
mail-was-you = If it was you, nothing more is needed.
