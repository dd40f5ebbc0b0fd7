# Español: notificaciones (bandeja del portal, ajustes, webhooks) y correos de notificación
nav-notifications = Notificaciones
notifications-bell = Notificaciones, { $count } sin leer
notifications-title = Notificaciones
notifications-empty = Todavía no hay notificaciones.
notifications-mark-read = Marcar como leída
notifications-mark-all-read = Marcar todas como leídas
notifications-all-read = Todas las notificaciones están marcadas como leídas.
notifications-open = Abrir
notifications-unread = Sin leer
notifications-patient = Paciente
notifications-taken = Medida el
notifications-earlier = Antes
notifications-settings = Ajustes de notificaciones
notifications-settings-intro = Elija qué le llega y por qué medio.
notifications-event = Evento
notifications-channel-inbox = Portal
notifications-channel-email = Correo electrónico
notifications-digest = Enviar un solo correo al día con todas las novedades, en lugar de un correo por evento
notifications-attach = Adjuntar el PDF a los correos sobre un informe nuevo (el adjunto sale de la protección del portal)
notifications-save = Guardar
notifications-saved = Sus ajustes de notificaciones se han guardado.
notifications-email-off = El correo electrónico no está configurado en este servicio; solo se usa la bandeja del portal.
event-measurement-analysed = Nuevo resultado de medición
event-measurement-report-ready = Informe de medición listo
event-periodic-report-created = Nuevo informe periódico
event-measurement-reviewed = Medición revisada por su médico
event-measurement-reviewed-staff = Medición revisada por un colega
event-result-urgent = Resultado urgente para revisar
event-webhook-disabled = Punto de conexión webhook desactivado
admin-notifications-title = Notificaciones
admin-group-events = Eventos que llegan a los médicos de este equipo
admin-group-events-saved = Las opciones de notificación del equipo se han guardado.
admin-webhooks-title = Webhooks
admin-webhook-new = Nuevo punto de conexión webhook
admin-webhook-url = Dirección (https://)
admin-webhook-group = Equipo asistencial
admin-webhook-events = Eventos
admin-webhook-create = Registrar
admin-webhook-created = El punto de conexión está registrado. Copie ahora su secreto de firma: solo se muestra esta vez.
admin-webhook-secret = Secreto de firma
webhook-url-too-long = La dirección es demasiado larga: 2.000 caracteres como máximo.
webhook-url-not-url = Esto no es una dirección web. Escríbala completa, empezando por https://
webhook-url-credentials = La dirección no debe contener un nombre de usuario ni una contraseña.
webhook-url-fragment = La dirección no debe terminar con una parte después de #.
webhook-url-no-host = La dirección no nombra ningún servidor.
webhook-url-not-https = La dirección debe empezar por https://
webhook-url-this-machine = La dirección lleva a este mismo servidor.
webhook-url-reserved = La dirección lleva a una dirección de red reservada, que no puede recibir webhooks.
webhook-url-private = La dirección lleva a una red privada, a la que este servidor no envía.
admin-webhook-no-events = Elija al menos un evento.
admin-webhook-enabled = Activo
admin-webhook-disabled = Desactivado
admin-webhook-enable = Activar
admin-webhook-disable = Desactivar
admin-webhook-delete = Eliminar
admin-webhook-deleted = El punto de conexión se ha eliminado.
admin-webhook-log = Entregas
admin-webhook-none = Todavía no hay puntos de conexión webhook.
admin-delivery-time = Hora
admin-delivery-event = Evento
admin-delivery-attempt = Intento
admin-delivery-outcome = Resultado
admin-delivery-status = Respuesta
admin-delivery-latency = Latencia (ms)
admin-delivery-delivered = Entregada
admin-delivery-failed = Fallida
admin-failed-deliveries = Entregas abandonadas
mail-greeting = Hola, { $name }:
mail-subject-measurement-analysed = Tacho: hay un nuevo resultado de medición
mail-subject-measurement-report-ready = Tacho: hay un nuevo informe
mail-subject-periodic-report-created = Tacho: hay un nuevo informe
mail-subject-measurement-reviewed = Tacho: se ha revisado una medición
mail-subject-result-urgent = Tacho: una medición requiere su revisión
mail-subject-webhook-disabled = Tacho: se ha desactivado un punto de conexión webhook
mail-body-measurement-analysed = Tiene un nuevo resultado de medición en Tacho.
mail-body-measurement-report-ready = Tiene un nuevo informe en Tacho.
mail-body-periodic-report-created = Tiene un nuevo informe en Tacho.
mail-body-measurement-reviewed = Su médico ha revisado una medición. La revisión le espera en Tacho.
mail-body-measurement-reviewed-staff = Un colega ha revisado una medición de un paciente de su equipo asistencial. La revisión está en Tacho.
mail-body-result-urgent = Una medición de uno de sus pacientes requiere su revisión pronto.
mail-body-webhook-disabled = Un punto de conexión webhook dejó de recibir eventos porque sus entregas fallaban una y otra vez, y se ha desactivado.
mail-digest-subject = Tacho: hay { $count } novedades
mail-digest-intro = Tiene { $count } novedades en Tacho:
mail-open = Abrir Tacho
mail-screening = Tacho es un cribado del ritmo cardíaco; no es un diagnóstico. Hable con su médico de cualquier resultado.
mail-settings = Cambiar qué mensajes recibe
mail-subject-password-reset = Tacho: establecer una contraseña nueva
mail-body-password-reset = Alguien ha pedido establecer una contraseña nueva para su cuenta de Tacho. El enlace de abajo funciona una vez, durante { $hours ->
    [one] una hora
   *[other] { $hours } horas
}.
mail-action-password-reset = Establecer una contraseña nueva
mail-subject-admin-reset = Tacho: se ha restablecido su contraseña
mail-body-admin-reset = Un administrador ha restablecido la contraseña de su cuenta de Tacho. Establezca una nueva con el enlace de abajo; funciona una vez, durante { $hours ->
    [one] una hora
   *[other] { $hours } horas
}.
mail-action-admin-reset = Establecer una contraseña nueva
mail-subject-email-change = Tacho: confirme su dirección de correo nueva
mail-body-email-change = Alguien quiere usar esta dirección para una cuenta de Tacho. El enlace de abajo la confirma; funciona una vez, durante { $hours ->
    [one] una hora
   *[other] { $hours } horas
}.
mail-action-email-change = Confirmar esta dirección
mail-not-you = Si no lo ha pedido usted, ignore este correo: no cambia nada.
mail-ask-admin = Si no lo esperaba, póngase en contacto con su clínica.
mail-subject-email-change-notice = Tacho: su dirección de correo va a cambiar
mail-body-email-change-notice = Alguien con la sesión iniciada en su cuenta de Tacho ha pedido cambiar su dirección de correo. Si no fue usted, detenga el cambio con el enlace de abajo (funciona durante { $hours ->
    [one] una hora
   *[other] { $hours } horas
}) y después elija una contraseña nueva.
mail-action-email-change-notice = Detener el cambio
mail-new-address = La nueva dirección sería { $address }.
mail-was-you = Si fue usted, no hace falta nada más.
