# Nederlands: meldingen (inbox in het portaal, instellingen, webhooks) en e-mails met meldingen
nav-notifications = Meldingen
notifications-bell = Meldingen, { $count } ongelezen
notifications-title = Meldingen
notifications-empty = Nog geen meldingen.
notifications-mark-read = Markeren als gelezen
notifications-mark-all-read = Alles markeren als gelezen
notifications-all-read = Alle meldingen zijn gemarkeerd als gelezen.
notifications-open = Openen
notifications-unread = Ongelezen
notifications-patient = Patiënt
notifications-taken = Gemeten
notifications-earlier = Eerder
notifications-settings = Instellingen voor meldingen
notifications-settings-intro = Kies wat u bereikt, en waar.
notifications-event = Gebeurtenis
notifications-channel-inbox = Portaal
notifications-channel-email = E-mail
notifications-digest = Eén e-mail per dag sturen met alles wat nieuw is, in plaats van één e-mail per gebeurtenis
notifications-attach = De pdf meesturen met e-mails over een nieuw rapport (de bijlage valt buiten de beveiliging van het portaal)
notifications-save = Opslaan
notifications-saved = Uw instellingen voor meldingen zijn opgeslagen.
notifications-email-off = E-mail is niet ingesteld voor deze dienst; alleen de inbox in het portaal wordt gebruikt.
event-measurement-analysed = Nieuwe meetuitslag
event-measurement-report-ready = Meetrapport klaar
event-periodic-report-created = Nieuw periodiek rapport
event-measurement-reviewed = Meting beoordeeld door uw arts
event-measurement-reviewed-staff = Meting beoordeeld door een collega
event-result-urgent = Dringende uitslag om te beoordelen
event-webhook-disabled = Webhook-eindpunt uitgeschakeld
admin-notifications-title = Meldingen
admin-group-events = Gebeurtenissen die de artsen van dit team bereiken
admin-group-events-saved = De keuzes voor meldingen van het team zijn opgeslagen.
admin-webhooks-title = Webhooks
admin-webhook-new = Nieuw webhook-eindpunt
admin-webhook-url = Adres (https://)
admin-webhook-group = Zorgteam
admin-webhook-events = Gebeurtenissen
admin-webhook-create = Registreren
admin-webhook-created = Het eindpunt is geregistreerd. Kopieer nu het ondertekeningsgeheim: het wordt maar één keer getoond.
admin-webhook-secret = Ondertekeningsgeheim
webhook-url-too-long = Het adres is te lang: hoogstens 2.000 tekens.
webhook-url-not-url = Dit is geen webadres. Schrijf het volledig, beginnend met https://
webhook-url-credentials = Het adres mag geen gebruikersnaam of wachtwoord bevatten.
webhook-url-fragment = Het adres mag niet eindigen op een deel na #.
webhook-url-no-host = Het adres noemt geen server.
webhook-url-not-https = Het adres moet beginnen met https://
webhook-url-this-machine = Het adres leidt naar deze server zelf.
webhook-url-reserved = Het adres leidt naar een gereserveerd netwerkadres, dat geen webhooks kan ontvangen.
webhook-url-private = Het adres leidt naar een privénetwerk, waarnaar deze server niet verstuurt.
admin-webhook-no-events = Kies ten minste één gebeurtenis.
admin-webhook-enabled = Actief
admin-webhook-disabled = Uitgeschakeld
admin-webhook-enable = Inschakelen
admin-webhook-disable = Uitschakelen
admin-webhook-delete = Verwijderen
admin-webhook-deleted = Het eindpunt is verwijderd.
admin-webhook-log = Afleveringen
admin-webhook-none = Nog geen webhook-eindpunten.
admin-delivery-time = Tijd
admin-delivery-event = Gebeurtenis
admin-delivery-attempt = Poging
admin-delivery-outcome = Resultaat
admin-delivery-status = Antwoord
admin-delivery-latency = Latentie (ms)
admin-delivery-delivered = Afgeleverd
admin-delivery-failed = Mislukt
admin-failed-deliveries = Opgegeven afleveringen
mail-greeting = Beste { $name },
mail-subject-measurement-analysed = Tacho: er is een nieuwe meetuitslag
mail-subject-measurement-report-ready = Tacho: er is een nieuw rapport
mail-subject-periodic-report-created = Tacho: er is een nieuw rapport
mail-subject-measurement-reviewed = Tacho: een meting is beoordeeld
mail-subject-result-urgent = Tacho: een meting vraagt om uw beoordeling
mail-subject-webhook-disabled = Tacho: een webhook-eindpunt is uitgeschakeld
mail-body-measurement-analysed = Er staat een nieuwe meetuitslag voor u klaar in Tacho.
mail-body-measurement-report-ready = Er staat een nieuw rapport voor u klaar in Tacho.
mail-body-periodic-report-created = Er staat een nieuw rapport voor u klaar in Tacho.
mail-body-measurement-reviewed = Uw arts heeft een meting beoordeeld. De beoordeling staat voor u klaar in Tacho.
mail-body-measurement-reviewed-staff = Een collega heeft een meting van een patiënt van uw zorgteam beoordeeld. De beoordeling staat in Tacho.
mail-body-result-urgent = Een meting van een van uw patiënten vraagt binnenkort om uw beoordeling.
mail-body-webhook-disabled = Een webhook-eindpunt ontving geen gebeurtenissen meer omdat de afleveringen bleven mislukken, en is uitgeschakeld.
mail-digest-subject = Tacho: er zijn { $count } nieuwe berichten
mail-digest-intro = Er staan { $count } nieuwe berichten voor u klaar in Tacho:
mail-open = Tacho openen
mail-screening = Tacho screent het hartritme; het stelt geen diagnose. Bespreek elke uitslag met uw arts.
mail-settings = Wijzigen welke berichten u ontvangt
mail-subject-password-reset = Tacho: een nieuw wachtwoord instellen
mail-body-password-reset = Iemand heeft gevraagd een nieuw wachtwoord in te stellen voor uw Tacho-account. De link hieronder werkt één keer, { $hours ->
    [one] één uur
   *[other] { $hours } uur
} lang.
mail-action-password-reset = Nieuw wachtwoord instellen
mail-subject-admin-reset = Tacho: uw wachtwoord is opnieuw ingesteld
mail-body-admin-reset = Een beheerder heeft het wachtwoord van uw Tacho-account opnieuw ingesteld. Kies een nieuw wachtwoord met de link hieronder; hij werkt één keer, { $hours ->
    [one] één uur
   *[other] { $hours } uur
} lang.
mail-action-admin-reset = Nieuw wachtwoord instellen
mail-subject-email-change = Tacho: bevestig uw nieuwe e-mailadres
mail-body-email-change = Iemand wil dit adres gebruiken voor een Tacho-account. De link hieronder bevestigt het; hij werkt één keer, { $hours ->
    [one] één uur
   *[other] { $hours } uur
} lang.
mail-action-email-change = Dit adres bevestigen
mail-not-you = Heeft u hier niet om gevraagd? Negeer dan deze e-mail: er verandert niets.
mail-ask-admin = Had u dit niet verwacht? Neem dan contact op met uw kliniek.
mail-subject-email-change-notice = Tacho: uw e-mailadres wordt gewijzigd
mail-body-email-change-notice = Iemand die bij uw Tacho-account is aangemeld, heeft gevraagd het e-mailadres te wijzigen. Was u het niet, stop de wijziging dan met de link hieronder (die werkt { $hours ->
    [one] één uur
   *[other] { $hours } uur
}) en stel daarna een nieuw wachtwoord in.
mail-action-email-change-notice = De wijziging stoppen
mail-new-address = Het nieuwe adres zou { $address } zijn.
mail-was-you = Was u het zelf, dan hoeft u niets te doen.
