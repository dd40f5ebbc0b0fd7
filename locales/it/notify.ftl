# Italiano: notifiche (posta in arrivo del portale, impostazioni, webhook) ed e-mail di notifica
nav-notifications = Notifiche
notifications-bell = Notifiche, { $count } da leggere
notifications-title = Notifiche
notifications-empty = Ancora nessuna notifica.
notifications-mark-read = Segna come letta
notifications-mark-all-read = Segna tutte come lette
notifications-all-read = Tutte le notifiche sono segnate come lette.
notifications-open = Apri
notifications-unread = Da leggere
notifications-patient = Paziente
notifications-taken = Misurata il
notifications-earlier = Prima
notifications-settings = Impostazioni delle notifiche
notifications-settings-intro = Scelga che cosa le arriva, e dove.
notifications-event = Evento
notifications-channel-inbox = Portale
notifications-channel-email = E-mail
notifications-digest = Inviare una sola e-mail al giorno con tutte le novità, invece di una e-mail per evento
notifications-attach = Allegare il PDF alle e-mail su un nuovo referto (l’allegato esce dalla protezione del portale)
notifications-save = Salva
notifications-saved = Le sue impostazioni delle notifiche sono salvate.
notifications-email-off = L’e-mail non è configurata per questo servizio; si usa solo la posta in arrivo del portale.
event-measurement-analysed = Nuovo risultato di misurazione
event-measurement-report-ready = Referto della misurazione pronto
event-periodic-report-created = Nuovo referto periodico
event-measurement-reviewed = Misurazione esaminata dal suo medico
event-measurement-reviewed-staff = Misurazione esaminata da un collega
event-result-urgent = Risultato urgente da esaminare
event-webhook-disabled = Endpoint webhook disattivato
admin-notifications-title = Notifiche
admin-group-events = Eventi inviati ai medici di questo team
admin-group-events-saved = Le scelte di notifica del team sono salvate.
admin-webhooks-title = Webhook
admin-webhook-new = Nuovo endpoint webhook
admin-webhook-url = Indirizzo (https://)
admin-webhook-group = Team di cura
admin-webhook-events = Eventi
admin-webhook-create = Registra
admin-webhook-created = L’endpoint è registrato. Copi ora il suo segreto di firma: viene mostrato solo questa volta.
admin-webhook-secret = Segreto di firma
webhook-url-too-long = L’indirizzo è troppo lungo: al massimo 2.000 caratteri.
webhook-url-not-url = Questo non è un indirizzo web. Lo scriva per intero, iniziando con https://
webhook-url-credentials = L’indirizzo non deve contenere un nome utente né una password.
webhook-url-fragment = L’indirizzo non deve terminare con una parte dopo #.
webhook-url-no-host = L’indirizzo non indica alcun server.
webhook-url-not-https = L’indirizzo deve iniziare con https://
webhook-url-this-machine = L’indirizzo porta a questo stesso server.
webhook-url-reserved = L’indirizzo porta a un indirizzo di rete riservato, che non può ricevere webhook.
webhook-url-private = L’indirizzo porta a una rete privata, verso cui questo server non invia.
admin-webhook-no-events = Scelga almeno un evento.
admin-webhook-enabled = Attivo
admin-webhook-disabled = Disattivato
admin-webhook-enable = Attiva
admin-webhook-disable = Disattiva
admin-webhook-delete = Elimina
admin-webhook-deleted = L’endpoint è eliminato.
admin-webhook-log = Consegne
admin-webhook-none = Ancora nessun endpoint webhook.
admin-delivery-time = Ora
admin-delivery-event = Evento
admin-delivery-attempt = Tentativo
admin-delivery-outcome = Esito
admin-delivery-status = Risposta
admin-delivery-latency = Latenza (ms)
admin-delivery-delivered = Consegnata
admin-delivery-failed = Non riuscita
admin-failed-deliveries = Consegne abbandonate
mail-greeting = Gentile { $name },
mail-subject-measurement-analysed = Tacho: è disponibile un nuovo risultato di misurazione
mail-subject-measurement-report-ready = Tacho: è disponibile un nuovo referto
mail-subject-periodic-report-created = Tacho: è disponibile un nuovo referto
mail-subject-measurement-reviewed = Tacho: una misurazione è stata esaminata
mail-subject-result-urgent = Tacho: una misurazione richiede il suo esame
mail-subject-webhook-disabled = Tacho: un endpoint webhook è stato disattivato
mail-body-measurement-analysed = Un nuovo risultato di misurazione la attende in Tacho.
mail-body-measurement-report-ready = Un nuovo referto la attende in Tacho.
mail-body-periodic-report-created = Un nuovo referto la attende in Tacho.
mail-body-measurement-reviewed = Il suo medico ha esaminato una misurazione. L’esame la attende in Tacho.
mail-body-measurement-reviewed-staff = Un collega ha esaminato una misurazione di un paziente del suo team di cura. La valutazione è in Tacho.
mail-body-result-urgent = Una misurazione di uno dei suoi pazienti richiede presto il suo esame.
mail-body-webhook-disabled = Un endpoint webhook non riceveva più eventi perché le consegne continuavano a non riuscire, ed è stato disattivato.
mail-digest-subject = Tacho: sono disponibili { $count } novità
mail-digest-intro = In Tacho la attendono { $count } novità:
mail-open = Apri Tacho
mail-screening = Tacho esegue uno screening del ritmo cardiaco; non formula diagnosi. Parli di ogni risultato con il suo medico.
mail-settings = Modifichi i messaggi che riceve
mail-subject-password-reset = Tacho: imposti una nuova password
mail-body-password-reset = Qualcuno ha chiesto di impostare una nuova password per il suo account Tacho. Il link qui sotto funziona una volta, per { $hours ->
    [one] un'ora
   *[other] { $hours } ore
}.
mail-action-password-reset = Imposta una nuova password
mail-subject-admin-reset = Tacho: la sua password è stata reimpostata
mail-body-admin-reset = Un amministratore ha reimpostato la password del suo account Tacho. Ne imposti una nuova con il link qui sotto; funziona una volta, per { $hours ->
    [one] un'ora
   *[other] { $hours } ore
}.
mail-action-admin-reset = Imposta una nuova password
mail-subject-email-change = Tacho: confermi il nuovo indirizzo e-mail
mail-body-email-change = Qualcuno vuole usare questo indirizzo per un account Tacho. Il link qui sotto lo conferma; funziona una volta, per { $hours ->
    [one] un'ora
   *[other] { $hours } ore
}.
mail-action-email-change = Conferma questo indirizzo
mail-not-you = Se non l'ha chiesto lei, ignori questa e-mail: non cambia nulla.
mail-ask-admin = Se non se lo aspettava, contatti la sua clinica.
mail-subject-email-change-notice = Tacho: il suo indirizzo e-mail sta per cambiare
mail-body-email-change-notice = Qualcuno collegato al suo account Tacho ha chiesto di cambiarne l’indirizzo e-mail. Se non è stato lei, fermi la modifica con il link qui sotto (valido per { $hours ->
    [one] un’ora
   *[other] { $hours } ore
}), poi scelga una nuova password.
mail-action-email-change-notice = Fermare la modifica
mail-new-address = Il nuovo indirizzo sarebbe { $address }.
mail-was-you = Se è stato lei, non serve altro.
