# Deutsch: Benachrichtigungen (Posteingang im Portal, Einstellungen, Webhooks) und Benachrichtigungs-E-Mails
nav-notifications = Benachrichtigungen
notifications-bell = Benachrichtigungen, { $count } ungelesen
notifications-title = Benachrichtigungen
notifications-empty = Noch keine Benachrichtigungen.
notifications-mark-read = Als gelesen markieren
notifications-mark-all-read = Alle als gelesen markieren
notifications-all-read = Alle Benachrichtigungen sind als gelesen markiert.
notifications-open = Öffnen
notifications-unread = Ungelesen
notifications-patient = Patient
notifications-taken = Gemessen am
notifications-earlier = Zuvor
notifications-settings = Benachrichtigungseinstellungen
notifications-settings-intro = Wählen Sie, was Sie erreicht und auf welchem Weg.
notifications-event = Ereignis
notifications-channel-inbox = Portal
notifications-channel-email = E-Mail
notifications-digest = Einmal täglich eine E-Mail mit allen Neuigkeiten senden, statt einer E-Mail pro Ereignis
notifications-attach = Das PDF an E-Mails über einen neuen Bericht anhängen (der Anhang verlässt den Schutz des Portals)
notifications-save = Speichern
notifications-saved = Ihre Benachrichtigungseinstellungen sind gespeichert.
notifications-email-off = E-Mail ist für diesen Dienst nicht eingerichtet; es wird nur der Posteingang im Portal verwendet.
event-measurement-analysed = Neues Messergebnis
event-measurement-report-ready = Messbericht bereit
event-periodic-report-created = Neuer periodischer Bericht
event-measurement-reviewed = Messung von Ihrem Arzt geprüft
event-measurement-reviewed-staff = Messung im Behandlungsteam geprüft
event-result-urgent = Dringendes Ergebnis zur Prüfung
event-webhook-disabled = Webhook-Endpunkt deaktiviert
admin-notifications-title = Benachrichtigungen
admin-group-events = Ereignisse, die an die Ärzte dieses Teams gehen
admin-group-events-saved = Die Benachrichtigungsauswahl des Teams ist gespeichert.
admin-webhooks-title = Webhooks
admin-webhook-new = Neuer Webhook-Endpunkt
admin-webhook-url = Adresse (https://)
admin-webhook-group = Behandlungsteam
admin-webhook-events = Ereignisse
admin-webhook-create = Registrieren
admin-webhook-created = Der Endpunkt ist registriert. Kopieren Sie jetzt sein Signaturgeheimnis: es wird nur dieses eine Mal angezeigt.
admin-webhook-secret = Signaturgeheimnis
webhook-url-too-long = Die Adresse ist zu lang: höchstens 2.000 Zeichen.
webhook-url-not-url = Das ist keine Webadresse. Schreiben Sie sie vollständig, beginnend mit https://
webhook-url-credentials = Die Adresse darf keinen Benutzernamen und kein Passwort enthalten.
webhook-url-fragment = Die Adresse darf nicht mit einem Teil nach # enden.
webhook-url-no-host = Die Adresse nennt keinen Server.
webhook-url-not-https = Die Adresse muss mit https:// beginnen.
webhook-url-this-machine = Die Adresse führt zu diesem Server selbst.
webhook-url-reserved = Die Adresse führt zu einer reservierten Netzwerkadresse, die keine Webhooks empfangen kann.
webhook-url-private = Die Adresse führt in ein privates Netzwerk, an das dieser Server nicht sendet.
admin-webhook-no-events = Wählen Sie mindestens ein Ereignis.
admin-webhook-enabled = Aktiv
admin-webhook-disabled = Deaktiviert
admin-webhook-enable = Aktivieren
admin-webhook-disable = Deaktivieren
admin-webhook-delete = Löschen
admin-webhook-deleted = Der Endpunkt ist gelöscht.
admin-webhook-log = Zustellungen
admin-webhook-none = Noch keine Webhook-Endpunkte.
admin-delivery-time = Zeit
admin-delivery-event = Ereignis
admin-delivery-attempt = Versuch
admin-delivery-outcome = Ergebnis
admin-delivery-status = Antwort
admin-delivery-latency = Latenz (ms)
admin-delivery-delivered = Zugestellt
admin-delivery-failed = Fehlgeschlagen
admin-failed-deliveries = Aufgegebene Zustellungen
mail-greeting = Guten Tag { $name },
mail-subject-measurement-analysed = Tacho: ein neues Messergebnis liegt vor
mail-subject-measurement-report-ready = Tacho: ein neuer Bericht liegt vor
mail-subject-periodic-report-created = Tacho: ein neuer Bericht liegt vor
mail-subject-measurement-reviewed = Tacho: eine Messung wurde geprüft
mail-subject-result-urgent = Tacho: eine Messung erfordert Ihre Prüfung
mail-subject-webhook-disabled = Tacho: ein Webhook-Endpunkt wurde deaktiviert
mail-body-measurement-analysed = Ein neues Messergebnis liegt für Sie in Tacho bereit.
mail-body-measurement-report-ready = Ein neuer Bericht liegt für Sie in Tacho bereit.
mail-body-periodic-report-created = Ein neuer Bericht liegt für Sie in Tacho bereit.
mail-body-measurement-reviewed = Ihr Arzt hat eine Messung geprüft. Die Prüfung liegt für Sie in Tacho bereit.
mail-body-measurement-reviewed-staff = Eine Kollegin oder ein Kollege hat eine Messung eines Patienten Ihres Behandlungsteams geprüft. Die Beurteilung steht in Tacho.
mail-body-result-urgent = Eine Messung eines Ihrer Patienten erfordert bald Ihre Prüfung.
mail-body-webhook-disabled = Ein Webhook-Endpunkt hat keine Ereignisse mehr empfangen, weil seine Zustellungen wiederholt fehlschlugen, und wurde deaktiviert.
mail-digest-subject = Tacho: { $count } Neuigkeiten liegen vor
mail-digest-intro = Für Sie liegen { $count } Neuigkeiten in Tacho vor:
mail-open = Tacho öffnen
mail-screening = Tacho ist ein Screening des Herzrhythmus, keine Diagnose. Besprechen Sie jedes Ergebnis mit Ihrem Arzt.
mail-settings = Ändern, welche Nachrichten Sie erhalten
mail-subject-password-reset = Tacho: neues Passwort festlegen
mail-body-password-reset = Jemand hat angefragt, ein neues Passwort für Ihr Tacho-Konto festzulegen. Der Link unten funktioniert einmal, { $hours ->
    [one] eine Stunde
   *[other] { $hours } Stunden
} lang.
mail-action-password-reset = Neues Passwort festlegen
mail-subject-admin-reset = Tacho: Ihr Passwort wurde zurückgesetzt
mail-body-admin-reset = Ein Administrator hat das Passwort Ihres Tacho-Kontos zurückgesetzt. Legen Sie mit dem Link unten ein neues fest; er funktioniert einmal, { $hours ->
    [one] eine Stunde
   *[other] { $hours } Stunden
} lang.
mail-action-admin-reset = Neues Passwort festlegen
mail-subject-email-change = Tacho: neue E-Mail-Adresse bestätigen
mail-body-email-change = Jemand möchte diese Adresse für ein Tacho-Konto verwenden. Der Link unten bestätigt sie; er funktioniert einmal, { $hours ->
    [one] eine Stunde
   *[other] { $hours } Stunden
} lang.
mail-action-email-change = Diese Adresse bestätigen
mail-not-you = Wenn Sie das nicht angefragt haben, ignorieren Sie diese E-Mail: Es ändert sich nichts.
mail-ask-admin = Wenn Sie das nicht erwartet haben, wenden Sie sich an Ihre Klinik.
mail-subject-email-change-notice = Tacho: Ihre E-Mail-Adresse wird geändert
mail-body-email-change-notice = Jemand, der bei Ihrem Tacho-Konto angemeldet ist, hat eine Änderung der E-Mail-Adresse verlangt. Wenn Sie es nicht waren, stoppen Sie die Änderung mit dem Link unten (er gilt { $hours ->
    [one] eine Stunde
   *[other] { $hours } Stunden
}) und legen Sie danach ein neues Passwort fest.
mail-action-email-change-notice = Änderung stoppen
mail-new-address = Die neue Adresse wäre { $address }.
mail-was-you = Wenn Sie es waren, ist nichts weiter nötig.
