# Français : notifications (boîte de réception du portail, réglages, webhooks) et e-mails de notification
nav-notifications = Notifications
notifications-bell = Notifications, { $count } non lues
notifications-title = Notifications
notifications-empty = Aucune notification pour l’instant.
notifications-mark-read = Marquer comme lue
notifications-mark-all-read = Tout marquer comme lu
notifications-all-read = Toutes les notifications sont marquées comme lues.
notifications-open = Ouvrir
notifications-unread = Non lue
notifications-patient = Patient
notifications-taken = Mesurée le
notifications-earlier = Auparavant
notifications-settings = Réglages des notifications
notifications-settings-intro = Choisissez ce qui vous parvient, et par quel moyen.
notifications-event = Événement
notifications-channel-inbox = Portail
notifications-channel-email = E-mail
notifications-digest = Envoyer un seul e-mail par jour avec toutes les nouveautés, au lieu d’un e-mail par événement
notifications-attach = Joindre le PDF aux e-mails annonçant un nouveau rapport (la pièce jointe quitte la protection du portail)
notifications-save = Enregistrer
notifications-saved = Vos réglages de notification sont enregistrés.
notifications-email-off = L’e-mail n’est pas configuré pour ce service ; seule la boîte de réception du portail est utilisée.
event-measurement-analysed = Nouveau résultat de mesure
event-measurement-report-ready = Rapport de mesure prêt
event-periodic-report-created = Nouveau rapport périodique
event-measurement-reviewed = Mesure examinée par votre médecin
event-measurement-reviewed-staff = Mesure examinée par un collègue
event-result-urgent = Résultat urgent à examiner
event-webhook-disabled = Point de terminaison webhook désactivé
admin-notifications-title = Notifications
admin-group-events = Événements envoyés aux médecins de cette équipe
admin-group-events-saved = Les choix de notification de l’équipe sont enregistrés.
admin-webhooks-title = Webhooks
admin-webhook-new = Nouveau point de terminaison webhook
admin-webhook-url = Adresse (https://)
admin-webhook-group = Équipe de soins
admin-webhook-events = Événements
admin-webhook-create = Enregistrer
admin-webhook-created = Le point de terminaison est enregistré. Copiez maintenant son secret de signature : il n’est affiché qu’une seule fois.
admin-webhook-secret = Secret de signature
webhook-url-too-long = L’adresse est trop longue : 2 000 caractères au plus.
webhook-url-not-url = Ce n’est pas une adresse web. Écrivez-la en entier, en commençant par https://
webhook-url-credentials = L’adresse ne doit contenir ni nom d’utilisateur ni mot de passe.
webhook-url-fragment = L’adresse ne doit pas se terminer par une partie après #.
webhook-url-no-host = L’adresse ne nomme aucun serveur.
webhook-url-not-https = L’adresse doit commencer par https://
webhook-url-this-machine = L’adresse mène à ce serveur lui-même.
webhook-url-reserved = L’adresse mène à une adresse réseau réservée, qui ne peut pas recevoir de webhooks.
webhook-url-private = L’adresse mène à un réseau privé, vers lequel ce serveur n’envoie rien.
admin-webhook-no-events = Choisissez au moins un événement.
admin-webhook-enabled = Actif
admin-webhook-disabled = Désactivé
admin-webhook-enable = Activer
admin-webhook-disable = Désactiver
admin-webhook-delete = Supprimer
admin-webhook-deleted = Le point de terminaison est supprimé.
admin-webhook-log = Livraisons
admin-webhook-none = Aucun point de terminaison webhook pour l’instant.
admin-delivery-time = Heure
admin-delivery-event = Événement
admin-delivery-attempt = Tentative
admin-delivery-outcome = Issue
admin-delivery-status = Réponse
admin-delivery-latency = Latence (ms)
admin-delivery-delivered = Livrée
admin-delivery-failed = Échouée
admin-failed-deliveries = Livraisons abandonnées
mail-greeting = Bonjour { $name },
mail-subject-measurement-analysed = Tacho : un nouveau résultat de mesure est disponible
mail-subject-measurement-report-ready = Tacho : un nouveau rapport est disponible
mail-subject-periodic-report-created = Tacho : un nouveau rapport est disponible
mail-subject-measurement-reviewed = Tacho : une mesure a été examinée
mail-subject-result-urgent = Tacho : une mesure demande votre examen
mail-subject-webhook-disabled = Tacho : un point de terminaison webhook a été désactivé
mail-body-measurement-analysed = Un nouveau résultat de mesure vous attend dans Tacho.
mail-body-measurement-report-ready = Un nouveau rapport vous attend dans Tacho.
mail-body-periodic-report-created = Un nouveau rapport vous attend dans Tacho.
mail-body-measurement-reviewed = Votre médecin a examiné une mesure. L’examen vous attend dans Tacho.
mail-body-measurement-reviewed-staff = Un collègue a examiné une mesure d’un patient de votre équipe de soins. L’examen est dans Tacho.
mail-body-result-urgent = Une mesure de l’un de vos patients demande votre examen rapidement.
mail-body-webhook-disabled = Un point de terminaison webhook ne recevait plus d’événements parce que ses livraisons échouaient sans cesse ; il a été désactivé.
mail-digest-subject = Tacho : { $count } nouveautés sont disponibles
mail-digest-intro = { $count } nouveautés vous attendent dans Tacho :
mail-open = Ouvrir Tacho
mail-screening = Tacho dépiste les troubles du rythme cardiaque ; il ne pose pas de diagnostic. Parlez de tout résultat à votre médecin.
mail-settings = Modifier les messages que vous recevez
mail-subject-password-reset = Tacho : choisir un nouveau mot de passe
mail-body-password-reset = Quelqu'un a demandé à choisir un nouveau mot de passe pour votre compte Tacho. Le lien ci-dessous fonctionne une fois, pendant { $hours ->
    [one] une heure
   *[other] { $hours } heures
}.
mail-action-password-reset = Choisir un nouveau mot de passe
mail-subject-admin-reset = Tacho : votre mot de passe a été réinitialisé
mail-body-admin-reset = Un administrateur a réinitialisé le mot de passe de votre compte Tacho. Choisissez-en un nouveau avec le lien ci-dessous ; il fonctionne une fois, pendant { $hours ->
    [one] une heure
   *[other] { $hours } heures
}.
mail-action-admin-reset = Choisir un nouveau mot de passe
mail-subject-email-change = Tacho : confirmez votre nouvelle adresse e-mail
mail-body-email-change = Quelqu'un souhaite utiliser cette adresse pour un compte Tacho. Le lien ci-dessous la confirme ; il fonctionne une fois, pendant { $hours ->
    [one] une heure
   *[other] { $hours } heures
}.
mail-action-email-change = Confirmer cette adresse
mail-not-you = Si vous n'avez rien demandé, ignorez cet e-mail : rien ne change.
mail-ask-admin = Si vous ne vous y attendiez pas, contactez votre clinique.
mail-subject-email-change-notice = Tacho : votre adresse e-mail va changer
mail-body-email-change-notice = Une personne connectée à votre compte Tacho a demandé à changer son adresse e-mail. Si ce n’est pas vous, arrêtez ce changement avec le lien ci-dessous (valable { $hours ->
    [one] une heure
   *[other] { $hours } heures
}), puis choisissez un nouveau mot de passe.
mail-action-email-change-notice = Arrêter le changement
mail-new-address = La nouvelle adresse serait { $address }.
mail-was-you = Si c’est vous, il n’y a rien d’autre à faire.
