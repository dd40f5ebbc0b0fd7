# العربية: الإشعارات (صندوق الوارد في البوابة، الإعدادات، خطافات الويب) ورسائل البريد الإلكتروني للإشعارات
nav-notifications = الإشعارات
notifications-bell = الإشعارات، { $count } غير مقروءة
notifications-title = الإشعارات
notifications-empty = لا توجد إشعارات بعد.
notifications-mark-read = تعليم كمقروء
notifications-mark-all-read = تعليم الكل كمقروء
notifications-all-read = تم تعليم جميع الإشعارات كمقروءة.
notifications-open = فتح
notifications-unread = غير مقروء
notifications-patient = المريض
notifications-taken = وقت القياس
notifications-earlier = سابقًا
notifications-settings = إعدادات الإشعارات
notifications-settings-intro = اختر ما يصلك وأين يصلك.
notifications-event = الحدث
notifications-channel-inbox = البوابة
notifications-channel-email = البريد الإلكتروني
notifications-digest = إرسال رسالة بريد إلكتروني واحدة يوميًا بكل ما هو جديد، بدلًا من رسالة لكل حدث
notifications-attach = إرفاق ملف PDF برسائل البريد الإلكتروني عن تقرير جديد (المرفق يخرج عن حماية البوابة)
notifications-save = حفظ
notifications-saved = تم حفظ إعدادات الإشعارات الخاصة بك.
notifications-email-off = البريد الإلكتروني غير مُعدّ في هذه الخدمة؛ يُستخدم صندوق الوارد في البوابة فقط.
event-measurement-analysed = نتيجة قياس جديدة
event-measurement-report-ready = تقرير القياس جاهز
event-periodic-report-created = تقرير دوري جديد
event-measurement-reviewed = راجع طبيبك قياسًا
event-measurement-reviewed-staff = راجع زميل قياسًا
event-result-urgent = نتيجة عاجلة للمراجعة
event-webhook-disabled = تم تعطيل نقطة نهاية خطاف الويب
admin-notifications-title = الإشعارات
admin-group-events = الأحداث التي تصل إلى أطباء هذا الفريق
admin-group-events-saved = تم حفظ اختيارات الإشعارات الخاصة بالفريق.
admin-webhooks-title = خطافات الويب
admin-webhook-new = نقطة نهاية جديدة لخطاف الويب
admin-webhook-url = العنوان (https://)
admin-webhook-group = فريق الرعاية
admin-webhook-events = الأحداث
admin-webhook-create = تسجيل
admin-webhook-created = تم تسجيل نقطة النهاية. انسخ سر التوقيع الخاص بها الآن: لن يُعرض إلا هذه المرة.
admin-webhook-secret = سر التوقيع
webhook-url-too-long = العنوان طويل جدًا: 2000 حرف على الأكثر.
webhook-url-not-url = هذا ليس عنوان ويب. اكتبه كاملًا، بدءًا بـ https://
webhook-url-credentials = يجب ألا يحتوي العنوان على اسم مستخدم أو كلمة مرور.
webhook-url-fragment = يجب ألا ينتهي العنوان بجزء بعد #.
webhook-url-no-host = العنوان لا يسمّي أي خادم.
webhook-url-not-https = يجب أن يبدأ العنوان بـ https://
webhook-url-this-machine = العنوان يؤدي إلى هذا الخادم نفسه.
webhook-url-reserved = العنوان يؤدي إلى عنوان شبكة محجوز لا يمكنه استقبال خطافات الويب.
webhook-url-private = العنوان يؤدي إلى شبكة خاصة لا يرسل إليها هذا الخادم.
admin-webhook-no-events = اختر حدثًا واحدًا على الأقل.
admin-webhook-enabled = نشطة
admin-webhook-disabled = معطّلة
admin-webhook-enable = تفعيل
admin-webhook-disable = تعطيل
admin-webhook-delete = حذف
admin-webhook-deleted = تم حذف نقطة النهاية.
admin-webhook-log = عمليات التسليم
admin-webhook-none = لا توجد نقاط نهاية لخطافات الويب بعد.
admin-delivery-time = الوقت
admin-delivery-event = الحدث
admin-delivery-attempt = المحاولة
admin-delivery-outcome = النتيجة
admin-delivery-status = الاستجابة
admin-delivery-latency = زمن الاستجابة (مللي ثانية)
admin-delivery-delivered = تم التسليم
admin-delivery-failed = فشل
admin-failed-deliveries = عمليات تسليم توقفت محاولاتها
mail-greeting = مرحبًا { $name }،
mail-subject-measurement-analysed = Tacho: نتيجة قياس جديدة جاهزة
mail-subject-measurement-report-ready = Tacho: تقرير جديد جاهز
mail-subject-periodic-report-created = Tacho: تقرير جديد جاهز
mail-subject-measurement-reviewed = Tacho: تمت مراجعة قياس
mail-subject-result-urgent = Tacho: قياس يحتاج إلى مراجعتك
mail-subject-webhook-disabled = Tacho: تم تعطيل نقطة نهاية لخطاف الويب
mail-body-measurement-analysed = نتيجة قياس جديدة جاهزة لك في Tacho.
mail-body-measurement-report-ready = تقرير جديد جاهز لك في Tacho.
mail-body-periodic-report-created = تقرير جديد جاهز لك في Tacho.
mail-body-measurement-reviewed = راجع طبيبك قياسًا. المراجعة جاهزة لك في Tacho.
mail-body-measurement-reviewed-staff = راجع زميل قياسًا لمريض من فريق الرعاية الخاص بك. المراجعة متاحة في Tacho.
mail-body-result-urgent = قياس لأحد مرضاك يحتاج إلى مراجعتك قريبًا.
mail-body-webhook-disabled = توقفت نقطة نهاية لخطاف الويب عن تلقي الأحداث لأن عمليات التسليم إليها ظلت تفشل، فتم تعطيلها.
mail-digest-subject = Tacho: { $count } تحديثات جاهزة
mail-digest-intro = لديك { $count } تحديثات في Tacho:
mail-open = فتح Tacho
mail-screening = Tacho يفحص نظم القلب؛ ولا يشخّص. تحدث مع طبيبك عن أي نتيجة.
mail-settings = تغيير الرسائل التي تتلقاها
mail-subject-password-reset = Tacho: تعيين كلمة مرور جديدة
mail-body-password-reset = طلب أحدهم تعيين كلمة مرور جديدة لحسابك في Tacho. يعمل الرابط أدناه مرة واحدة، لمدة { $hours ->
    [one] ساعة
   *[other] { $hours } ساعة
}.
mail-action-password-reset = تعيين كلمة مرور جديدة
mail-subject-admin-reset = Tacho: تمت إعادة تعيين كلمة المرور
mail-body-admin-reset = أعاد أحد المسؤولين تعيين كلمة مرور حسابك في Tacho. عيّن كلمة مرور جديدة بالرابط أدناه؛ يعمل مرة واحدة، لمدة { $hours ->
    [one] ساعة
   *[other] { $hours } ساعة
}.
mail-action-admin-reset = تعيين كلمة مرور جديدة
mail-subject-email-change = Tacho: أكّد عنوان بريدك الإلكتروني الجديد
mail-body-email-change = يريد أحدهم استخدام هذا العنوان لحساب في Tacho. الرابط أدناه يؤكده؛ يعمل مرة واحدة، لمدة { $hours ->
    [one] ساعة
   *[other] { $hours } ساعة
}.
mail-action-email-change = أكّد هذا العنوان
mail-not-you = إذا لم تطلب ذلك، فتجاهل هذه الرسالة: لن يتغير شيء.
mail-ask-admin = إذا لم تكن تتوقع ذلك، فتواصل مع عيادتك.
mail-subject-email-change-notice = Tacho: يجري تغيير عنوان بريدك الإلكتروني
mail-body-email-change-notice = طلب شخص مسجّل الدخول إلى حسابك في Tacho تغيير عنوان بريده الإلكتروني. إن لم تكن أنت، فأوقف التغيير بالرابط أدناه (يعمل لمدة { $hours ->
    [one] ساعة واحدة
   *[other] { $hours } ساعة
})، ثم اختر كلمة مرور جديدة.
mail-action-email-change-notice = إيقاف التغيير
mail-new-address = سيكون العنوان الجديد { $address }.
mail-was-you = إن كنت أنت، فلا حاجة لأي إجراء آخر.
